// Package shellcmd reads a shell command line the way omni needs to, without
// running or expanding anything: its words (LeadingWords, Split), its
// pipelines of simple commands with their redirections (Parse), the program
// a command's words run after assignments and wrappers (Program,
// ProgramName, IsAssignment), whether it is a plain read of one file
// (FileRead), and how to quote a word for a POSIX shell (Quote).
//
// It is the one place of the module that knows shell syntax; hooks, the
// pipeline's distillers and the stats projection ask it. It imports the
// standard library only.
package shellcmd
