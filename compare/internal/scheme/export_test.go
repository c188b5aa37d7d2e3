package scheme

// SegmentScratch is segmentScratch, for the tests that run the segment
// rows through compare (package scheme_test).
var SegmentScratch = segmentScratch
