// Package dreamos reads the message files every Dream.OS generation wrote:
// JSON objects under a dozen spellings of the same fields, queue entries
// that wrap a message, Markdown with headers in several styles, text
// files to which a writer appends one Markdown message after another, and
// inbox.json in each shape its writers kept it (inboxjson.go: an array, one
// object, a container object), read one entry at a time.
//
// It is a pure function from bytes to messages: it never opens a file,
// never looks at the clock and never decides where a message goes. Its
// rule is to refuse only bytes in which no text at all can be found. Every
// other field that cannot be read falls back (priority to normal, time to
// the file's time, id to one derived from the content, sender to unknown,
// recipient to the mailbox's agent, a role such as "Captain Agent-4" to
// the agent it names), and the original value and the
// fallback are noted in Meta["fallbacks"], so nothing is lost and nothing
// is guessed silently.
package dreamos
