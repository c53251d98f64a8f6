//go:build !unix

package transcript

// openFlags: no O_NOFOLLOW or O_NONBLOCK here; the file is still checked
// to be a regular file after it is opened.
const openFlags = 0
