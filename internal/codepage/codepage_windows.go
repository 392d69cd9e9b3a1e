package codepage

import (
	"fmt"
	"unicode/utf16"

	"golang.org/x/sys/windows"
)

var getOEMCP = windows.NewLazySystemDLL("kernel32.dll").NewProc("GetOEMCP")

func fromConsole(out []byte) string {
	cp, err := windows.GetConsoleOutputCP()
	if err != nil || cp == 0 {
		oem, _, _ := getOEMCP.Call()
		cp = uint32(oem)
	}
	text, err := decode(out, cp)
	if err != nil {
		return string(out)
	}
	return text
}

// decode is out read in code page cp.
func decode(out []byte, cp uint32) (string, error) {
	if len(out) == 0 {
		return "", nil
	}
	n, err := windows.MultiByteToWideChar(cp, 0, &out[0], int32(len(out)), nil, 0)
	if err != nil {
		return "", fmt.Errorf("cannot read %d bytes in code page %d: %w", len(out), cp, err)
	}
	units := make([]uint16, n)
	if _, err := windows.MultiByteToWideChar(cp, 0, &out[0], int32(len(out)), &units[0], n); err != nil {
		return "", fmt.Errorf("cannot read %d bytes in code page %d: %w", len(out), cp, err)
	}
	return string(utf16.Decode(units)), nil
}
