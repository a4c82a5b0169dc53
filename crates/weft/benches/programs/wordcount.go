// Word count: counts the words of a generated text in a map[string]int.
// Same as wordcount.weft. Args: [words] (default 600,000).
package main

import (
	"fmt"
	"os"
	"strconv"
)

func main() {
	n := 600000
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	syl := []string{"ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "we", "zu"}
	vocab := []string{}
	for i := 0; i < 20000; i++ {
		w := ""
		x := i
		for j := 0; j < 5; j++ {
			w = w + syl[x%10]
			x = x / 10
		}
		vocab = append(vocab, w)
	}
	counts := make(map[string]int)
	x := 1
	bytes := 0
	for i := 0; i < n; i++ {
		x = (x*1103515245 + 12345) % 2147483648
		w := vocab[(x/65536)%20000]
		counts[w]++
		bytes += len(w) + 1
	}
	most := 0
	for _, c := range counts {
		if c > most {
			most = c
		}
	}
	fmt.Println("words", n, "bytes", bytes, "distinct", len(counts), "most", most)
}
