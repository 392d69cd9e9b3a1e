// Command doclinks checks the links of README.md, CONTRIBUTING.md and
// docs/*.md: every relative link and image must name a file of this
// repository, and every #anchor a heading of the page it points to
// (anchors made from headings as GitHub makes them). Links to other sites
// are not followed. It prints each broken link with its file and line, and
// exits 1 if there is one; it changes no file. Run it from the
// repository's root:
//
//	go run ./scripts/doclinks
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

var (
	link    = regexp.MustCompile(`!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	fenceRe = regexp.MustCompile("^\\s*(`{3,}|~{3,})")
	codeRe  = regexp.MustCompile("`+[^`]*`+")
	heading = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	scheme  = regexp.MustCompile(`^[a-z][a-z0-9+.-]*:`)
	notSlug = regexp.MustCompile(`[^\p{L}\p{N}_\- ]`)
)

// prose calls f with each line outside fenced code, its inline code
// blanked where blank is set.
func prose(text string, blank bool, f func(n int, line string)) {
	fence := ""
	for i, line := range strings.Split(text, "\n") {
		if m := fenceRe.FindStringSubmatch(line); m != nil {
			switch {
			case fence == "":
				fence = m[1]
			case strings.HasPrefix(m[1], fence):
				fence = ""
			}
			continue
		}
		if fence == "" && blank {
			line = codeRe.ReplaceAllStringFunc(line, func(c string) string { return strings.Repeat(" ", len(c)) })
		}
		if fence == "" {
			f(i+1, line)
		}
	}
}

func slug(h string) string {
	return strings.ReplaceAll(notSlug.ReplaceAllString(strings.ToLower(strings.TrimSpace(h)), ""), " ", "-")
}

func anchors(path string) (map[string]bool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	seen, out := map[string]int{}, map[string]bool{}
	prose(string(data), false, func(_ int, line string) {
		h := heading.FindStringSubmatch(line)
		if h == nil {
			return
		}
		base := slug(h[1])
		if k := seen[base]; k > 0 {
			out[fmt.Sprintf("%s-%d", base, k)] = true
		} else {
			out[base] = true
		}
		seen[base]++
	})
	return out, nil
}

func main() {
	docs, _ := filepath.Glob("docs/*.md")
	pages := append([]string{"README.md", "CONTRIBUTING.md"}, docs...)
	broken, checked := 0, 0
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if err != nil {
			fmt.Printf("%s: %v\n", page, err)
			broken++
			continue
		}
		prose(string(data), true, func(n int, line string) {
			for _, m := range link.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if scheme.MatchString(target) {
					continue
				}
				checked++
				path, anchor, _ := strings.Cut(target, "#")
				dest := page
				if path != "" {
					dest = filepath.Clean(filepath.Join(filepath.Dir(page), path))
				}
				if _, err := os.Stat(dest); err != nil {
					fmt.Printf("%s:%d: %s: no file %s\n", page, n, target, dest)
					broken++
					continue
				}
				if anchor != "" && strings.HasSuffix(dest, ".md") {
					if a, err := anchors(dest); err != nil || !a[anchor] {
						fmt.Printf("%s:%d: %s: no heading #%s in %s\n", page, n, target, anchor, dest)
						broken++
					}
				}
			}
		})
	}
	fmt.Printf("%d links in %d pages, %d broken\n", checked, len(pages), broken)
	if broken > 0 {
		os.Exit(1)
	}
}
