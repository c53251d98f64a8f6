package jsonenc

// MarshalReflect is Marshal by encoding/json, for the tests.
var MarshalReflect = marshalReflect
