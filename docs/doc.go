// Package docs holds trj's documentation: the architecture page, the
// "write your own model" guide and the model gallery, all Markdown.
//
// The package has no API. Its tests keep the Markdown honest: every fenced
// Go block in a page is preceded by a marker comment naming where the code
// comes from, and the tests check that the block is exactly that code.
//
//	<!-- snippet NAME -->            the region between "// snippet:NAME" and
//	                                 "// endsnippet:NAME" in this package's
//	                                 _test.go files, which compile and run
//	<!-- source FILE SYMBOL... -->   the declarations of SYMBOLs (Func, Type,
//	                                 Type.Method) in FILE, doc comments included
//	<!-- api DIR SYMBOL... -->       the same declarations from package DIR
//	                                 without doc comments or bodies: the
//	                                 signatures of a contract
//	<!-- output NAME -->             a text block holding what the guide's
//	                                 code prints; rewritten by -update, not
//	                                 compared (numbers move with the samplers)
//
// Paths are relative to the repository root. After changing the source, run
//
//	go test ./docs -run TestMarkdown -update
//
// to rewrite the blocks, and review the diff. The tests also check that
// relative links resolve, that every model has a gallery page, that the
// outputs pasted into the gallery name the models' current parameters, and
// that the import rules of architecture.md hold.
package docs
