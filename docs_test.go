package idkit_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The README, BENCHMARKS.md and the guides under docs/ link to each other,
// to their sections and to files of the repository: every relative link
// resolves, and every #anchor names a heading of the page it points to.
func TestDocsLinks(t *testing.T) {
	t.Parallel()
	pages, err := filepath.Glob("docs/*.md")
	require.NoError(t, err)
	require.NotEmpty(t, pages, "the guides under docs/")
	pages = append(pages, "README.md", "BENCHMARKS.md")
	checked := 0
	for _, page := range pages {
		for _, l := range links(t, page) {
			target, anchor, _ := strings.Cut(l.target, "#")
			file := page
			if target != "" {
				file = filepath.Join(filepath.Dir(page), target)
			}
			_, err := os.Stat(file)
			if !assert.NoError(t, err, "%s:%d: link %q: no such file", page, l.line, l.target) {
				continue
			}
			if anchor != "" {
				require.Equal(t, ".md", filepath.Ext(file), "%s:%d: link %q: an anchor in a file that is not markdown", page, l.line, l.target)
				assert.Contains(t, anchors(t, file), anchor, "%s:%d: link %q: no such heading in %s", page, l.line, l.target, file)
			}
			checked++
		}
	}
	assert.Greater(t, checked, 20, "the pages link to each other")
}

// The README is the front door: short, with the two set-up commands first.
func TestReadmeIsAFrontDoor(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("README.md")
	require.NoError(t, err)
	text := string(b)
	assert.LessOrEqual(t, strings.Count(text, "\n"), 300, "README.md lines")
	first := strings.Index(text, "```sh\n")
	require.Positive(t, first, "a shell block")
	assert.True(t, strings.HasPrefix(text[first:], "```sh\ngo run ./cmd/idkit/idkit-full compare"), "compare is the first command")
	assert.Contains(t, text[first:first+200], "go test github.com/idkit/idkit/...", "the tests of every module are the second")
}

type link struct {
	target string
	line   int
}

var linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// links returns the relative links of a markdown page, outside code.
func links(t *testing.T, page string) []link {
	t.Helper()
	f, err := os.Open(page)
	require.NoError(t, err)
	defer f.Close()
	var out []link
	fenced := false
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range linkRE.FindAllStringSubmatch(withoutCode(line), -1) {
			if target := m[1]; !strings.Contains(target, "://") && !strings.HasPrefix(target, "mailto:") {
				out = append(out, link{target, n})
			}
		}
	}
	require.NoError(t, sc.Err())
	return out
}

// withoutCode drops the `code spans` of a line, where brackets are text.
func withoutCode(line string) string {
	parts := strings.Split(line, "`")
	var b strings.Builder
	for i, p := range parts {
		if i%2 == 0 {
			b.WriteString(p)
		}
	}
	return b.String()
}

// anchors returns the anchors of a markdown page's headings, made as
// GitHub makes them: lower case, spaces to hyphens, other punctuation
// but hyphens and underscores dropped, and -1, -2 for repeats.
func anchors(t *testing.T, page string) []string {
	t.Helper()
	b, err := os.ReadFile(page)
	require.NoError(t, err)
	var out []string
	seen := map[string]int{}
	fenced := false
	for line := range strings.SplitSeq(string(b), "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var s strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				s.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				s.WriteRune(r)
			}
		}
		a := s.String()
		if k := seen[a]; k > 0 {
			out = append(out, a+"-"+strconv.Itoa(k))
		} else {
			out = append(out, a)
		}
		seen[a]++
	}
	return out
}
