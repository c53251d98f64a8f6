// Package layers holds only tests of the binary's structure: the import
// graph, read with go list, keeps the layering the README's "Layout"
// section describes, and no package does costly work at init, which every
// hook call would pay for.
package layers
