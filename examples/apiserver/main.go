package main

import "github.com/kapi-dev/kapi/examples/apiserver/server"

func main() { server.Main(nil) }
