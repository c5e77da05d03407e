// Command generate is gqlgen's generate with the list encoders' plugin: it writes
// generated.go, model/models_gen.go and schema.resolvers.go as `gqlgen generate` does,
// and listencoders.generated.go (graph/internal/listencoders). gqlgen's command cannot
// load plugins; `go generate` in graph/ runs this instead (resolver.go).
package main

import (
	"fmt"
	"os"

	"github.com/99designs/gqlgen/api"
	"github.com/99designs/gqlgen/codegen/config"

	"messages/graph/internal/listencoders"
)

func main() {
	cfg, err := config.LoadConfigFromDefaultLocations()
	if err == nil {
		err = api.Generate(cfg, api.AddPlugin(listencoders.New()))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
