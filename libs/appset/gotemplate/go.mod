module github.com/capstan/appset-gotemplate

go 1.25

require (
	dario.cat/mergo v1.0.2
	github.com/Masterminds/sprig/v3 v3.3.0
	github.com/gosimple/slug v1.15.0
	github.com/jeremywohl/flatten v1.0.2-0.20211013061545-07e4a09fb8e4
	github.com/valyala/fasttemplate v1.2.2
	sigs.k8s.io/yaml v1.6.0
)

require (
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	go.yaml.in/yaml/v2 v2.4.2 // indirect
)

// The versions Argo CD v3.2 builds with (its go.mod), so sprig's helpers behave identically.
require (
	github.com/Masterminds/goutils v1.1.1 // indirect
	github.com/Masterminds/semver/v3 v3.4.0 // indirect
	github.com/google/uuid v1.6.1-0.20241114170450-2d3c2a9cc518 // indirect
	github.com/gosimple/unidecode v1.0.1 // indirect
	github.com/huandu/xstrings v1.5.0 // indirect
	github.com/mitchellh/copystructure v1.2.0 // indirect
	github.com/mitchellh/reflectwalk v1.0.2 // indirect
	github.com/shopspring/decimal v1.4.0 // indirect
	github.com/spf13/cast v1.7.1 // indirect
	golang.org/x/crypto v0.46.0 // indirect
)
