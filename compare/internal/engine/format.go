package engine

import (
	"fmt"
	"strings"
)

// MiB formats a byte count in MiB with three significant digits.
func MiB(v float64) string {
	m := v / (1 << 20)
	switch {
	case m >= 100:
		return fmt.Sprintf("%.0f MiB", m)
	case m >= 10:
		return fmt.Sprintf("%.1f MiB", m)
	default:
		return fmt.Sprintf("%.2f MiB", m)
	}
}

// BytesText is n bytes in the largest unit that keeps it at 1 or more.
func BytesText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func Thousands(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + Thousands(-n)
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func Pct(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }
