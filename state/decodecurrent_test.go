package state

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"
)

// TestDecodeOnePassAgreesWithTheLongWay: Decode reads a v2.0 checkpoint
// of known fields in one pass (decodeCurrent) and anything else the long
// way (decodeAny); whichever way it goes, it gives what the long way gives
// (the checkpoint, migrated, the error). The inputs are the valid fixture
// with its schema_version spelled again after it, as the long way's
// version probe (a *string) and the one-pass decoder (a string) could
// read differently: JSON null sets a pointer to nil but leaves a string
// as it was.
func TestDecodeOnePassAgreesWithTheLongWay(t *testing.T) {
	valid := tstRead(t, "testdata/v20-valid.json")
	end := bytes.LastIndexByte(valid, '}')
	with := func(extra string) []byte {
		return append(append(bytes.Clone(valid[:end]), ","+extra...), valid[end:]...)
	}
	if _, ok := decodeCurrent(valid); !ok {
		t.Fatal("the valid fixture is not read in one pass")
	}
	for _, b := range [][]byte{
		valid,
		with(`"schema_version":null`),
		with(`"SCHEMA_VERSION":null`),
		with(`"schema_version":"2"`),
		with(`"schema_version":"1.3"`),
		with(`"Schema_Version":"2.0"`),
		with(`"schema_version":2`),
	} {
		cp, migrated, err := Decode(b)
		lcp, lmigrated, lerr := decodeAny(b)
		if fmt.Sprint(err) != fmt.Sprint(lerr) || migrated != lmigrated || (err == nil) && !reflect.DeepEqual(cp, lcp) {
			t.Errorf("%.80s...%s:\nDecode:    %v (migrated %v)\ndecodeAny: %v (migrated %v)", b, b[end-10:], err, migrated, lerr, lmigrated)
		}
	}
}
