//go:build !amd64

package flat

func dot(a, b []float32) float32 { return dotGo(a, b) }
