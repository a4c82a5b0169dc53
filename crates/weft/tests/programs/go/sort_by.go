// The Go program whose output sort_by.weft's golden file holds, up to the
// nil less at the end: the same sorts with sort.SliceStable (wfs prints
// float64s as Weft prints floats).
package main

import (
	"fmt"
	"math/rand"
	"sort"
	"strconv"
	"strings"
)

type Person struct {
	name string
	age  int
}

// sortBy is Weft's sort_by: a sorted copy, stable.
func sortBy[T any](l []T, less func(a, b T) bool) []T {
	c := append([]T{}, l...)
	sort.SliceStable(c, func(i, j int) bool { return less(c[i], c[j]) })
	return c
}

func wfs(l []float64) string {
	parts := make([]string, len(l))
	for i, x := range l {
		s := strconv.FormatFloat(x, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		parts[i] = s
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func main() {
	byAge := func(a, b Person) bool { return a.age < b.age }
	people := []Person{{"ann", 30}, {"bob", 25}, {"cy", 30}, {"dan", 25}, {"eve", 41}, {"fay", 30}, {"gus", 25}}
	sorted := sortBy(people, byAge)
	fmt.Println(sorted)
	fmt.Println(people)
	fmt.Println(sortBy(sorted, func(a, b Person) bool { return a.name > b.name }))

	score := map[string]int{"pear": 3, "fig": 1, "apple": 3, "kiwi": 2, "banana": 1}
	words := []string{"pear", "fig", "apple", "kiwi", "banana"}
	words = sortBy(words, func(a, b string) bool { return score[a] < score[b] })
	fmt.Println(words)
	fmt.Println(sortBy(words, func(a, b string) bool { return len(a) < len(b) }))

	fmt.Println(wfs(sortBy([]float64{2.5, -1, 10, 0.5, 2.5}, func(a, b float64) bool { return a > b })))
	fmt.Println(sortBy([][]int{{1, 2, 3}, {}, {7}, {4, 5}}, func(a, b []int) bool { return len(a) < len(b) }))
	fmt.Println(sortBy([]int{}, nil), sortBy([]int{7}, nil))

	ok := true
	for n := 0; n <= 40; n++ {
		for r := 0; r < n || r == 0; r++ {
			l := []int{}
			for i := 0; i < n; i++ {
				l = append(l, (i*7+r)%n%5)
			}
			s := sortBy(l, func(a, b int) bool { return a < b })
			want := append([]int{}, l...)
			sort.Ints(want)
			for i := range s {
				if s[i] != want[i] {
					ok = false
				}
			}
		}
	}
	fmt.Println(ok)

	ask := make(chan []int)
	ans := make(chan bool)
	go func() {
		for q := range ask {
			ans <- q[0] > q[1]
		}
	}()
	fmt.Println(sortBy(rand.Perm(12), func(a, b int) bool {
		ask <- []int{a, b}
		return <-ans
	}))
	close(ask)
}
