package state

import (
	"fmt"
	"reflect"
	"testing"
	"time"
	"unsafe"
)

// TestCloneSharesNothing fills every field of a Checkpoint, at any depth
// and unexported ones included, clones it, and checks that the clone holds
// the same values and shares no memory with the original (no map, slice
// or pointer in common): Clone copies field by field, so a field added
// later that Clone does not deep-copy fails here, not in a closure that
// mutates its copy and changes the snapshot a decision was made on.
func TestCloneSharesNothing(t *testing.T) {
	orig := &Checkpoint{}
	n := 0
	fillValue(reflect.ValueOf(orig).Elem(), &n)
	c := orig.Clone()
	if c.src != nil {
		t.Error("the clone carries src: it would pass for the file the original was read from")
	}
	want := *orig
	want.src = nil
	if !reflect.DeepEqual(c, &want) {
		t.Errorf("the clone differs from the original:\n%+v\n%+v", c, &want)
	}
	for _, p := range sharedMemory(reflect.ValueOf(orig).Elem(), reflect.ValueOf(c).Elem(), "Checkpoint") {
		t.Errorf("%s is shared between the checkpoint and its clone", p)
	}
}

var timeType = reflect.TypeOf(time.Time{})

// settable gives v even when it is an unexported field.
func settable(v reflect.Value) reflect.Value {
	if v.CanSet() {
		return v
	}
	return reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
}

// fillValue gives every field in v a distinct non-zero value.
func fillValue(v reflect.Value, n *int) {
	v = settable(v)
	*n++
	switch {
	case v.Type() == timeType:
		v.Set(reflect.ValueOf(time.Date(2025, 1, 1, 0, 0, *n, 0, time.UTC)))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", *n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(*n))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(*n))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(*n))
	case reflect.Struct:
		for i := range v.NumField() {
			fillValue(v.Field(i), n)
		}
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fillValue(p.Elem(), n)
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			fillValue(s.Index(i), n)
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for range 2 {
			k := reflect.New(v.Type().Key()).Elem()
			fillValue(k, n)
			e := reflect.New(v.Type().Elem()).Elem()
			fillValue(e, n)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Interface:
		v.Set(reflect.ValueOf(fmt.Sprintf("i%d", *n)))
	default:
		panic(fmt.Sprintf("fillValue: %s (%s) is not handled: extend the test", v.Type(), v.Kind()))
	}
}

// sharedMemory lists the paths at which a and b hold the same map, slice
// backing array or pointer.
func sharedMemory(a, b reflect.Value, path string) []string {
	a, b = settable(a), settable(b)
	if a.Type() == timeType {
		return nil // a value; its *Location is immutable
	}
	var out []string
	switch a.Kind() {
	case reflect.Struct:
		for i := range a.NumField() {
			out = append(out, sharedMemory(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name)...)
		}
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return nil
		}
		if a.Pointer() == b.Pointer() {
			return []string{path}
		}
		out = append(out, sharedMemory(a.Elem(), b.Elem(), "*"+path)...)
	case reflect.Slice:
		if a.Len() == 0 || b.Len() == 0 {
			return nil
		}
		if a.Pointer() == b.Pointer() {
			return []string{path}
		}
		for i := range min(a.Len(), b.Len()) {
			out = append(out, sharedMemory(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i))...)
		}
	case reflect.Map:
		if a.IsNil() || b.IsNil() {
			return nil
		}
		if a.Pointer() == b.Pointer() {
			return []string{path}
		}
		for _, k := range a.MapKeys() {
			if bv := b.MapIndex(k); bv.IsValid() {
				// Map values are not addressable: compare copies.
				av := reflect.New(a.Type().Elem()).Elem()
				av.Set(a.MapIndex(k))
				bc := reflect.New(b.Type().Elem()).Elem()
				bc.Set(bv)
				out = append(out, sharedMemory(av, bc, fmt.Sprintf("%s[%v]", path, k))...)
			}
		}
	case reflect.Interface:
		if !a.IsNil() && !b.IsNil() {
			out = append(out, sharedMemory(a.Elem(), b.Elem(), path)...)
		}
	}
	return out
}

// The test itself catches a shallow copy: a clone that shares a field's
// memory is reported.
func TestSharedMemoryFindsAShallowCopy(t *testing.T) {
	orig := &Checkpoint{}
	n := 0
	fillValue(reflect.ValueOf(orig).Elem(), &n)
	shallow := *orig
	got := sharedMemory(reflect.ValueOf(orig).Elem(), reflect.ValueOf(&shallow).Elem(), "Checkpoint")
	for _, want := range []string{"Checkpoint.StateMachine.CompletedStates", "Checkpoint.StateMachine.TransitionTable", "Checkpoint.PhaseData", "Checkpoint.SupervisorState", "Checkpoint.ErrorState.LastError", "Checkpoint.ErrorState.FailedState", "Checkpoint.Workflow", "Checkpoint.extra", "Checkpoint.src"} {
		found := false
		for _, g := range got {
			found = found || g == want
		}
		if !found {
			t.Errorf("a shallow copy's %s was not reported (reported: %v)", want, got)
		}
	}
}
