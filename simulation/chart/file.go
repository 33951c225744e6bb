package chart

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// WriteSVGFile writes c as SVG to a file in dir named after its title
// (lower-case letters, digits and dashes, see [fileName]) and returns the
// file's path.
func (c Chart) WriteSVGFile(dir string) (path string, err error) {
	return writeSVGFile(dir, c.Title, c.WriteSVG)
}

// WriteSVGFile writes h as SVG to a file in dir named after its title (see
// [fileName]) and returns the file's path.
func (h HeatMap) WriteSVGFile(dir string) (path string, err error) {
	return writeSVGFile(dir, h.Title, h.WriteSVG)
}

// writeSVGFile creates the file in dir named after title and writes it with
// write.
func writeSVGFile(dir, title string, write func(io.Writer) error) (path string, err error) {
	path = filepath.Join(dir, fileName(title)+".svg")
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	return path, write(f)
}

// fileName turns a chart's title into a file name without its extension:
// lower-case letters and digits, each run of anything else one dash.
func fileName(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(title) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
			continue
		}
		dash = true
	}
	return b.String()
}
