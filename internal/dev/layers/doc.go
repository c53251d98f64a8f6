// Package layers holds only a test: the packages' import graph, read with
// go list, keeps the layering the README's "Layout" section describes.
package layers
