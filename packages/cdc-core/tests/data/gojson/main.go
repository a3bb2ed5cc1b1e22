// Prints, as JSON (go run . > golden.json), how the JSON libraries TiCDC uses (at the versions its go.mod pins, configured as its
// codecs configure them) write a set of probe strings and floats. The output is the golden file of the
// Go-compatible JSON writer in cdc-core.
package main

import (
	stdjson "encoding/json"
	"encoding/hex"
	"math"
	"os"

	gojson "github.com/goccy/go-json"
	jsoniter "github.com/json-iterator/go"
	"github.com/mailru/easyjson/jwriter"
)

var probes = []string{
	"plain ascii",
	"<a href=\"x\">&amp;</a>",
	"\b\f\n\r\t",
	"\x00\x01\x07\x0b\x0e\x1f\x7f",
	"quote \" backslash \\ slash /",
	"literal backslash-b \\b and backslash-f \\f",
	"é 中文 😀",
	"\u2028 line \u2029 paragraph",
	"\ufffd replacement char",
	"bad \xff byte",
	"bad \x80\x80 continuation",
	"encoded surrogate \xed\xa0\x80",
	"truncated \xe4\xb8",
	"",
}

var floats64 = []float64{0, 1, -1, 100, 0.1, 0.5, 3.14, 1e-7, 1e-6, 9.99e-7, 0.000001, 0.00001, 1e15, 1e16,
	1e20, 1e21, 1.5e300, 123456789012345680, -2.5e-10, 5e-324, math.MaxFloat64, 12345.123, 1.0 / 3}

var floats32 = []float32{0, 1, 100, 0.1, 3.14, 12345.123, 1e-7, 1e-6, 1e20, 1e21, 3.4028235e38, 1.0 / 3}

type row struct {
	Input   string            `json:"input_hex"`
	Outputs map[string]string `json:"outputs_hex"`
}

func h(b []byte) string { return hex.EncodeToString(b) }

func main() {
	iter := jsoniter.Config{EscapeHTML: false, SortMapKeys: false}.Froze()
	var strings, f64, f32 []row
	for _, s := range probes {
		std, _ := stdjson.Marshal(s)
		goccy, _ := gojson.Marshal(s)
		ej := &jwriter.Writer{}
		ej.String(s)
		stream := iter.BorrowStream(nil)
		stream.WriteString(s)
		it := append([]byte(nil), stream.Buffer()...)
		iter.ReturnStream(stream)
		strings = append(strings, row{h([]byte(s)), map[string]string{
			"encoding/json": h(std), "goccy/go-json": h(goccy), "easyjson": h(ej.Buffer.BuildBytes()), "json-iterator": h(it),
		}})
	}
	for _, v := range floats64 {
		std, _ := stdjson.Marshal(v)
		stream := iter.BorrowStream(nil)
		stream.WriteFloat64(v)
		it := append([]byte(nil), stream.Buffer()...)
		iter.ReturnStream(stream)
		bits := make([]byte, 8)
		for i := 0; i < 8; i++ {
			bits[i] = byte(math.Float64bits(v) >> (56 - 8*i))
		}
		f64 = append(f64, row{h(bits), map[string]string{"encoding/json": h(std), "json-iterator": h(it)}})
	}
	for _, v := range floats32 {
		std, _ := stdjson.Marshal(v)
		stream := iter.BorrowStream(nil)
		stream.WriteFloat32(v)
		it := append([]byte(nil), stream.Buffer()...)
		iter.ReturnStream(stream)
		bits := make([]byte, 4)
		for i := 0; i < 4; i++ {
			bits[i] = byte(math.Float32bits(v) >> (24 - 8*i))
		}
		f32 = append(f32, row{h(bits), map[string]string{"encoding/json": h(std), "json-iterator": h(it)}})
	}
	enc := stdjson.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	_ = enc.Encode(map[string]any{"strings": strings, "float64": f64, "float32": f32})
}
