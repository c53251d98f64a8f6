package app

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash"
	"io/fs"
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
// committed reads the same (README, "Team configuration"). Every file of
// .git is read as a bounded regular file: the model may put a FIFO or a
// huge file there.
func gitFileState(root, rel string, content []byte) string {
	gitDir := gitDirOf(root)
	if gitDir == "" {
		return gates.GitNone
	}
	sha256Repo := objectFormatSHA256(gitCommonDir(gitDir))
	index, err := state.ReadRegular(filepath.Join(gitDir, "index"), maxGitIndex)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return gates.GitUntracked // a repository with nothing staged yet
		}
		return gitUnreadable
	}
	ix := gitIndex{hashLen: 20, newHash: sha1.New}
	if sha256Repo {
		ix = gitIndex{hashLen: 32, newHash: sha256.New}
	}
	id, found, ok := ix.lookup(index, filepath.ToSlash(rel), func(name string) ([]byte, error) {
		// A split index: the entries not changed since the shared index
		// was written are there.
		return state.ReadRegular(filepath.Join(gitDir, name), maxGitIndex)
	})
	switch {
	case !ok:
		return gitUnreadable
	case !found:
		return gates.GitUntracked
	case bytes.Equal(id, ix.blobID(content)):
		return gates.GitCommitted
	}
	return gates.GitModified
}

// gitUnreadable: git's index is there but does not read (damaged, too
// large, of a format this reader does not know, or not a regular file).
const gitUnreadable = "git's index unreadable"

// maxGitIndex bounds the index read (a repository of 100,000 files has one
// of about 10 MB).
const maxGitIndex = 32 << 20

// gitDirOf finds the project's git directory: .git, or the directory a
// .git file names (a worktree, a submodule). "" when there is none.
func gitDirOf(root string) string {
	dotGit := filepath.Join(root, ".git")
	fi, err := os.Lstat(dotGit)
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

// gitCommonDir is where a worktree's shared files are (its commondir
// file), else gitDir itself.
func gitCommonDir(gitDir string) string {
	b, err := state.ReadRegular(filepath.Join(gitDir, "commondir"), 4096)
	if err != nil {
		return gitDir
	}
	dir := strings.TrimSpace(string(b))
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(gitDir, dir)
	}
	return dir
}

// objectFormatSHA256 reports whether the repository's configuration says
// extensions.objectFormat = sha256.
func objectFormatSHA256(commonDir string) bool {
	b, err := state.ReadRegular(filepath.Join(commonDir, "config"), 1<<20)
	if err != nil {
		return false
	}
	section := ""
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			section = strings.ToLower(strings.Trim(line, "[] \t"))
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if ok && section == "extensions" && strings.EqualFold(strings.TrimSpace(key), "objectformat") {
			return strings.EqualFold(strings.TrimSpace(value), "sha256")
		}
	}
	return false
}

// gitIndex reads an index of one object format.
type gitIndex struct {
	hashLen int
	newHash func() hash.Hash
}

// blobID is the object id git gives a file's content.
func (ix gitIndex) blobID(content []byte) []byte {
	h := ix.newHash()
	h.Write([]byte("blob " + strconv.Itoa(len(content)) + "\x00"))
	h.Write(content)
	return h.Sum(nil)
}

// indexEntryOf is one entry of an index: its path ("" for an entry of a
// split index that replaces one of its shared index), object id, stage.
type indexEntryOf struct {
	name  string
	oid   []byte
	stage uint16
}

// lookup finds path's stage-0 object id in a git index (versions 2 to 4),
// applying a split index to its shared index (read by readShared). ok is
// false when an index does not read.
func (ix gitIndex) lookup(index []byte, path string, readShared func(name string) ([]byte, error)) (id []byte, found, ok bool) {
	entries, link, ok := ix.parse(index)
	if !ok {
		return nil, false, false
	}
	if link != nil {
		shared, err := readShared("sharedindex." + hex.EncodeToString(link.shared))
		if err != nil {
			return nil, false, false
		}
		base, _, ok := ix.parse(shared)
		if !ok {
			return nil, false, false
		}
		if entries, ok = link.apply(base, entries); !ok {
			return nil, false, false
		}
	}
	for _, e := range entries {
		if e.name == path && e.stage == 0 {
			return e.oid, true, true
		}
	}
	return nil, false, true
}

// splitLink is a split index's link extension.
type splitLink struct {
	shared            []byte
	deleted, replaced []int // positions in the shared index
}

// apply merges a split index's own entries onto its shared index's: the
// deleted positions go, the replaced ones take, in order, the split
// index's entries without a name; its named entries are added.
func (l *splitLink) apply(base, own []indexEntryOf) ([]indexEntryOf, bool) {
	gone := map[int]bool{}
	for _, k := range l.deleted {
		gone[k] = true
	}
	var replacements, added []indexEntryOf
	for _, e := range own {
		if e.name == "" {
			replacements = append(replacements, e)
		} else {
			added = append(added, e)
		}
	}
	if len(replacements) != len(l.replaced) {
		return nil, false
	}
	merged := append([]indexEntryOf(nil), base...)
	for i, k := range l.replaced {
		if k < 0 || k >= len(merged) {
			return nil, false
		}
		merged[k].oid, merged[k].stage = replacements[i].oid, replacements[i].stage
	}
	out := make([]indexEntryOf, 0, len(merged)+len(added))
	for k, e := range merged {
		if !gone[k] {
			out = append(out, e)
		}
	}
	return append(out, added...), true
}

// parse reads an index's entries and its split-index link (nil for none).
func (ix gitIndex) parse(index []byte) (entries []indexEntryOf, link *splitLink, ok bool) {
	if len(index) < 12 || string(index[:4]) != "DIRC" {
		return nil, nil, false
	}
	version := binary.BigEndian.Uint32(index[4:8])
	count := binary.BigEndian.Uint32(index[8:12])
	if version < 2 || version > 4 || int64(count) > int64(len(index)) {
		return nil, nil, false
	}
	pos, prev := 12, ""
	for i := uint32(0); i < count; i++ {
		fixed := 40 + ix.hashLen + 2 // stat data, object id, flags
		if pos+fixed > len(index) {
			return nil, nil, false
		}
		entry := index[pos:]
		oid := entry[40 : 40+ix.hashLen]
		flags := binary.BigEndian.Uint16(entry[40+ix.hashLen:])
		n := fixed
		if flags&0x4000 != 0 { // extended flags (version 3 and later)
			if version < 3 {
				return nil, nil, false
			}
			n += 2
		}
		if pos+n > len(index) {
			return nil, nil, false
		}
		rest := index[pos+n:]
		var name string
		if version == 4 {
			strip, used := binary.Uvarint(rest)
			if used <= 0 || strip > uint64(len(prev)) {
				return nil, nil, false
			}
			end := bytes.IndexByte(rest[used:], 0)
			if end < 0 {
				return nil, nil, false
			}
			name = prev[:len(prev)-int(strip)] + string(rest[used:used+end])
			pos += n + used + end + 1
		} else {
			end := bytes.IndexByte(rest, 0)
			if end < 0 {
				return nil, nil, false
			}
			name = string(rest[:end])
			// Entries are padded with 1 to 8 NULs to a multiple of 8.
			pos += (n + end + 8) &^ 7
		}
		prev = name
		entries = append(entries, indexEntryOf{name: name, oid: oid, stage: (flags >> 12) & 3})
	}
	// The extensions: only "link" (a split index) matters here.
	for pos+8 <= len(index)-ix.hashLen {
		sig := string(index[pos : pos+4])
		size := int(binary.BigEndian.Uint32(index[pos+4 : pos+8]))
		if size < 0 || pos+8+size > len(index)-ix.hashLen {
			return nil, nil, false
		}
		data := index[pos+8 : pos+8+size]
		pos += 8 + size
		if sig != "link" {
			continue
		}
		if len(data) < ix.hashLen {
			return nil, nil, false
		}
		link = &splitLink{shared: data[:ix.hashLen]}
		rest := data[ix.hashLen:]
		if len(rest) > 0 {
			var used int
			if link.deleted, used, ok = ewahBits(rest); !ok {
				return nil, nil, false
			}
			if link.replaced, _, ok = ewahBits(rest[used:]); !ok {
				return nil, nil, false
			}
		}
	}
	return entries, link, true
}

// maxEWAHBits bounds the positions an EWAH bitmap may set.
const maxEWAHBits = 1 << 22

// ewahBits decodes one EWAH-compressed bitmap (git's ewah/ format: the
// bit count, the word count, the words, the last run-length word's
// position) into its set positions, and returns the bytes it took.
func ewahBits(b []byte) (set []int, used int, ok bool) {
	if len(b) < 8 {
		return nil, 0, false
	}
	bits := int64(binary.BigEndian.Uint32(b[0:4]))
	words := int64(binary.BigEndian.Uint32(b[4:8]))
	if bits > maxEWAHBits || 8+8*words+4 > int64(len(b)) {
		return nil, 0, false
	}
	w := func(i int64) uint64 { return binary.BigEndian.Uint64(b[8+8*i:]) }
	pos := int64(0)
	for i := int64(0); i < words; {
		rlw := w(i)
		i++
		running := rlw&1 == 1
		runWords := int64((rlw >> 1) & 0xffffffff)
		literals := int64(rlw >> 33)
		if running {
			for k := int64(0); k < 64*runWords && pos+k < bits; k++ {
				set = append(set, int(pos+k))
			}
		}
		pos += 64 * runWords
		for j := int64(0); j < literals; j++ {
			if i >= words {
				return nil, 0, false
			}
			lit := w(i)
			i++
			for k := int64(0); k < 64; k++ {
				if lit&(1<<k) != 0 && pos+k < bits {
					set = append(set, int(pos+k))
				}
			}
			pos += 64
		}
		if pos > bits+64 {
			return nil, 0, false
		}
	}
	return set, int(8 + 8*words + 4), true
}
