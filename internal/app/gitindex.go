package app

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/state"
)

// gitFileState says whether git has a project file with this content,
// reading git's index (never running git: nothing orch-hook reads is run,
// and git runs what a repository's configuration names). A file whose
// content is the index's counts as committed: an edit staged but not
// committed reads the same (README, "Team configuration").
func gitFileState(root, rel string, content []byte) string {
	gitDir := gitDirOf(root)
	if gitDir == "" {
		return gates.GitNone
	}
	index, err := state.ReadRegular(filepath.Join(gitDir, "index"), maxGitIndex)
	if err != nil {
		if os.IsNotExist(err) {
			return gates.GitUntracked // a repository with nothing staged yet
		}
		return "git's index unreadable"
	}
	id, found, ok := indexEntry(index, filepath.ToSlash(rel))
	switch {
	case !ok:
		return "git's index unreadable"
	case !found:
		return gates.GitUntracked
	case bytes.Equal(id, gitBlobID(content)):
		return gates.GitCommitted
	}
	return gates.GitModified
}

// gitDirOf finds the project's git directory: .git, or the directory a
// .git file names (a worktree, a submodule). "" when there is none.
func gitDirOf(root string) string {
	dotGit := filepath.Join(root, ".git")
	fi, err := os.Stat(dotGit)
	switch {
	case err != nil:
		return ""
	case fi.IsDir():
		return dotGit
	}
	b, err := state.ReadRegular(dotGit, 4096)
	if err != nil {
		return ""
	}
	dir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return ""
	}
	dir = strings.TrimSpace(dir)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	return dir
}

// maxGitIndex bounds the index read (a large repository's is tens of MB).
const maxGitIndex = 256 << 20

// gitBlobID is the SHA-1 object id git gives a file's content.
func gitBlobID(content []byte) []byte {
	h := sha1.New()
	h.Write([]byte("blob " + strconv.Itoa(len(content)) + "\x00"))
	h.Write(content)
	return h.Sum(nil)
}

// indexEntry finds path's stage-0 object id in a git index (versions 2
// to 4, SHA-1). ok is false when the index does not read.
func indexEntry(index []byte, path string) (id []byte, found, ok bool) {
	const hashLen = 20
	if len(index) < 12 || string(index[:4]) != "DIRC" {
		return nil, false, false
	}
	version := binary.BigEndian.Uint32(index[4:8])
	count := binary.BigEndian.Uint32(index[8:12])
	if version < 2 || version > 4 {
		return nil, false, false
	}
	pos, prev := 12, ""
	for i := uint32(0); i < count; i++ {
		const fixed = 40 + hashLen + 2 // stat data, object id, flags
		if pos+fixed > len(index) {
			return nil, false, false
		}
		entry := index[pos:]
		oid := entry[40 : 40+hashLen]
		flags := binary.BigEndian.Uint16(entry[40+hashLen:])
		n := fixed
		if flags&0x4000 != 0 { // extended flags (version 3 and later)
			if version < 3 {
				return nil, false, false
			}
			n += 2
		}
		if pos+n > len(index) {
			return nil, false, false
		}
		rest := index[pos+n:]
		var name string
		if version == 4 {
			strip, used := binary.Uvarint(rest)
			if used <= 0 || strip > uint64(len(prev)) {
				return nil, false, false
			}
			end := bytes.IndexByte(rest[used:], 0)
			if end < 0 {
				return nil, false, false
			}
			name = prev[:len(prev)-int(strip)] + string(rest[used:used+end])
			pos += n + used + end + 1
		} else {
			end := bytes.IndexByte(rest, 0)
			if end < 0 {
				return nil, false, false
			}
			name = string(rest[:end])
			// Entries are padded with 1 to 8 NULs to a multiple of 8.
			pos += (n + end + 8) &^ 7
		}
		prev = name
		stage := (flags >> 12) & 3
		if name == path && stage == 0 {
			return oid, true, true
		}
	}
	return nil, false, true
}
