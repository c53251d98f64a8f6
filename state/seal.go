package state

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/orch-hook/orch-hook/internal/jsonenc"
	"github.com/orch-hook/orch-hook/internal/jsonfast"
)

// Tamper evidence (README, "State"): every log record carries the hash of
// the record before it (a chain); the checkpoint carries the hash of the
// record that commits it and a MAC keyed by a per-workflow secret kept
// outside the project; and a marker outside the project records, after
// every write, the serial, the checkpoint's digest and the log's length and
// last hash. A change made by anything but orch-hook is then told apart
// from a writer that died mid-write.

// linkLen is how many bytes of SHA-256 a chain link keeps (128 bits).
const linkLen = 16

// lineHash is the chain link of one log line (without its newline).
func lineHash(line []byte) string {
	line = bytes.TrimSuffix(line, []byte("\n"))
	sum := sha256.Sum256(line)
	return hex.EncodeToString(sum[:linkLen])
}

// Seal is the checkpoint's integrity block, written as its first field.
type Seal struct {
	// Log is the hash of the log record that commits this checkpoint.
	Log string `json:"log"`
	// MAC is HMAC-SHA256, under the workflow's key, of the checkpoint
	// without its seal, a newline and Log.
	MAC string `json:"mac"`
}

const sealPrefix = `{"seal":`

// sealBytes returns the checkpoint file for body (the checkpoint encoded
// without a seal): the seal goes first, so the rest is body byte for byte.
func sealBytes(body []byte, seal Seal) []byte {
	sb, _ := jsonenc.Marshal(&seal)
	out := make([]byte, 0, len(sealPrefix)+len(sb)+len(body)+2)
	out = append(out, sealPrefix...)
	out = append(out, sb...)
	if len(body) > 2 {
		out = append(out, ',')
	}
	out = append(out, body[1:]...)
	return out
}

// splitSeal takes the seal off a checkpoint file: body is the checkpoint
// as it was sealed; seal is nil for a file without one. A seal in any form
// but the one orch-hook writes is an error (a file edited by hand).
func splitSeal(file []byte) (body []byte, seal *Seal, err error) {
	file = bytes.TrimRight(file, " \t\r\n")
	if !bytes.HasPrefix(file, []byte(sealPrefix)) {
		return file, nil, nil
	}
	rest := file[len(sealPrefix):]
	end := bytes.IndexByte(rest, '}')
	if end < 0 {
		return nil, nil, errors.New("its seal is cut off")
	}
	var s Seal
	if err := jsonfast.Unmarshal(rest[:end+1], &s); err != nil {
		return nil, nil, fmt.Errorf("the seal does not parse: %w", trimJSONError(err))
	}
	if again := sealBytes([]byte("{}"), s); !bytes.HasPrefix(file, again[:len(again)-1]) {
		return nil, nil, errors.New("the seal is not in the form orch-hook writes")
	}
	rest = rest[end+1:]
	switch {
	case bytes.HasPrefix(rest, []byte(",")):
		body = append([]byte("{"), rest[1:]...)
	case bytes.Equal(rest, []byte("}")):
		body = []byte("{}")
	default:
		return nil, nil, errors.New("the seal is not in the form orch-hook writes")
	}
	return body, &s, nil
}

// macOf is the checkpoint MAC of body committed by log record logHash.
func macOf(key, body []byte, logHash string) string {
	m := hmac.New(sha256.New, key)
	m.Write(body)
	m.Write([]byte("\n"))
	m.Write([]byte(logHash))
	return hex.EncodeToString(m.Sum(nil))
}

// checkMAC reports whether seal is body's under key.
func checkMAC(key, body []byte, seal *Seal) bool {
	want := macOf(key, body, seal.Log)
	return hmac.Equal([]byte(want), []byte(seal.MAC))
}

// fileDigest is the SHA-256 of a whole file's bytes, as the marker keeps it.
func fileDigest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ConfigDir is orch-hook's directory in the user's configuration
// ($XDG_CONFIG_HOME/orch-hook, else e.g. ~/.config/orch-hook): the markers
// and the workflows' keys, outside every project.
func ConfigDir() (string, error) {
	base := os.Getenv("XDG_CONFIG_HOME")
	if base == "" {
		dir, err := os.UserConfigDir()
		if err != nil {
			return "", fmt.Errorf("orch-hook keeps each workflow's seal outside the project, in the user's configuration directory, and there is none here: %w", err)
		}
		base = dir
	}
	return filepath.Join(base, "orch-hook"), nil
}

// KeysDir holds one secret per workflow. Claude Code's sandbox can hide it
// from the model's commands (sandbox.filesystem.denyRead; README, "Threat
// model"), while hooks, which are not sandboxed, read it.
func KeysDir() (string, error) {
	dir, err := ConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "keys"), nil
}

func keyPath(lineage string) (string, error) {
	if lineage == "" || filepath.Base(lineage) != lineage || lineage[0] == '.' {
		return "", fmt.Errorf("lineage %q cannot name a key file", lineage)
	}
	dir, err := KeysDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, lineage), nil
}

// KeyError: the workflow's key cannot be read.
type KeyError struct {
	Lineage string
	Err     error
}

func (e *KeyError) Error() string {
	return fmt.Sprintf("the key of workflow %s, which seals its state, cannot be read (%v), so a change to the state cannot be checked", e.Lineage, e.Err)
}

// Hint says how to seal the state again.
func (e *KeyError) Hint() string {
	return "if the key was removed, check the state with `orch-hook status`, then accept it with /orch-hook:resolve accept-state (typed in Claude Code) or `orch-hook repair --accept`, which seals it with a new key"
}

// readKey returns the key of lineage.
func readKey(lineage string) ([]byte, error) {
	path, err := keyPath(lineage)
	if err != nil {
		return nil, &KeyError{Lineage: lineage, Err: err}
	}
	b, err := readSmall(path, 256)
	if err != nil {
		return nil, &KeyError{Lineage: lineage, Err: err}
	}
	key, err := hex.DecodeString(string(bytes.TrimSpace(b)))
	if err != nil || len(key) < 16 {
		return nil, &KeyError{Lineage: lineage, Err: errors.New("not a key orch-hook wrote")}
	}
	return key, nil
}

// newKey creates the key of a new workflow (0600, in a 0700 directory).
func newKey(lineage string) ([]byte, error) {
	path, err := keyPath(lineage)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), dirMode); err != nil {
		return nil, err
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if err := writeFileAtomic(path, []byte(hex.EncodeToString(key)+"\n")); err != nil {
		return nil, fmt.Errorf("writing the workflow's key: %w", err)
	}
	return key, nil
}

// keyFor returns lineage's key, creating it when it does not exist yet
// (the first seal of a workflow adopted from an earlier orch-hook).
func keyFor(lineage string) ([]byte, error) {
	key, err := readKey(lineage)
	var ke *KeyError
	if errors.As(err, &ke) && errors.Is(ke.Err, fs.ErrNotExist) {
		return newKey(lineage)
	}
	return key, err
}

// removeKey forgets a finished workflow's key (when it is archived).
func removeKey(lineage string) {
	if path, err := keyPath(lineage); err == nil {
		os.Remove(path)
	}
}

// ReadRegular reads a regular file of at most max bytes, as readSmall:
// for files the model could replace with a FIFO or a device (git's index).
func ReadRegular(path string, max int64) ([]byte, error) { return readSmall(path, max) }

// readSmall reads a regular file of at most max bytes without following a
// final symlink. The open does not wait (a FIFO put in a file's place
// would hold the hook until Claude Code's timeout, which lets the call
// through), and anything but a regular file is refused.
func readSmall(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|noFollow|nonBlock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return readOpen(f, path, fi, max)
}

// readOpen reads the open regular file f (path, as fi describes it) to
// its end, in a buffer sized once from fi (a few reads, not io.ReadAll's
// doubling): at most max bytes, and a file that grows past them while
// read is refused.
func readOpen(f *os.File, path string, fi os.FileInfo, max int64) ([]byte, error) {
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, max)
	}
	b := make([]byte, 0, fi.Size()+512)
	for int64(len(b)) <= max {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := f.Read(b[len(b):min(int64(cap(b)), max+1)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, max)
	}
	return b, nil
}
