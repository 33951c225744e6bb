// Command apicount counts the exported names of the library's packages: the
// top-level constants, variables, functions and types, and the methods of
// exported types, of every non-test file of every package under the
// directories given (default: the root module's), leaving out internal
// packages, commands (package main) and test kits' own tests. It prints one
// line per package and the total:
//
//	go run ./scripts/apicount
//	go run ./scripts/apicount otel grpc fleet
//
// With -names it prints each package's names too, one per line.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

var names = flag.Bool("names", false, "print every exported name")

func main() {
	flag.Parse()
	roots := flag.Args()
	if len(roots) == 0 {
		roots = []string{"."}
	}
	total := 0
	for _, root := range roots {
		counts, err := count(root)
		if err != nil {
			fmt.Fprintln(os.Stderr, "apicount:", err)
			os.Exit(1)
		}
		dirs := make([]string, 0, len(counts))
		for dir := range counts {
			dirs = append(dirs, dir)
		}
		slices.Sort(dirs)
		for _, dir := range dirs {
			fmt.Printf("%5d %s\n", counts[dir], dir)
			total += counts[dir]
		}
	}
	fmt.Printf("%5d total\n", total)
}

// count returns the exported names of each package under root, by its
// directory, staying inside root's module (a directory with a go.mod of its
// own is another module).
func count(root string) (map[string]int, error) {
	counts := map[string]int{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if path != root {
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir
			}
		}
		name := d.Name()
		if name == "internal" || name == "testdata" || name == "scripts" || name == "cmd" || (strings.HasPrefix(name, ".") && path != root) {
			return filepath.SkipDir
		}
		n, ok, err := exported(path)
		if err != nil {
			return err
		}
		if ok {
			counts[path] = n
		}
		return nil
	})
	return counts, err
}

// exported counts the exported names of the package in dir, and reports
// whether dir holds a library package.
func exported(dir string) (int, bool, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, false, err
	}
	fset := token.NewFileSet()
	n, found := 0, false
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return 0, false, err
		}
		if f.Name.Name == "main" {
			continue
		}
		found = true
		for _, name := range inFile(f) {
			if *names {
				fmt.Printf("\t%s.%s\n", dir, name)
			}
			n++
		}
	}
	return n, found, nil
}

// inFile returns f's exported top-level names and its exported methods of
// exported types.
func inFile(f *ast.File) []string {
	var n []string
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			if d.Recv == nil {
				n = append(n, d.Name.Name)
			} else if recv, ok := receiver(d.Recv.List[0].Type); ok {
				n = append(n, recv+"."+d.Name.Name)
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						n = append(n, s.Name.Name)
					}
				case *ast.ValueSpec:
					for _, id := range s.Names {
						if id.IsExported() {
							n = append(n, id.Name)
						}
					}
				}
			}
		}
	}
	return n
}

// receiver returns a method's receiver type name, and whether it is exported.
func receiver(t ast.Expr) (string, bool) {
	for {
		switch e := t.(type) {
		case *ast.StarExpr:
			t = e.X
		case *ast.IndexExpr:
			t = e.X
		case *ast.IndexListExpr:
			t = e.X
		case *ast.Ident:
			return e.Name, e.IsExported()
		default:
			return "", false
		}
	}
}
