// Package codepage turns what a Windows console program printed into
// text: programs such as schtasks write to a pipe in the console's code
// page (850 or 1252 in much of Europe, 932 in Japan), not in UTF-8, so a
// path with "é" or "日本" in it comes back as bytes no Go string compare
// matches.
//
// It owns only that decoding; it starts no program and reads no file.
package codepage

import "unicode/utf8"

// Console is out as text: as it is where it is UTF-8 (or UTF-16 with a
// byte-order mark, which its reader decodes), else decoded from the
// console's output code page (the OEM code page for a process with no
// console). Outside Windows it is out as it is. Bytes the code page has
// no character for come back as the system decodes them (its default
// character), never as an error.
func Console(out []byte) string {
	if utf8.Valid(out) || (len(out) >= 2 && out[0] == 0xFF && out[1] == 0xFE) {
		return string(out)
	}
	return fromConsole(out)
}
