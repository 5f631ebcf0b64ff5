{{/* Per service: its gRPC port, and who may call it (NetworkPolicy). */}}
{{- define "capstan.grpcPort" -}}
{{- get (dict "api" 8083 "repo" 8091 "appset" 8092 "sync" 8093) . -}}
{{- end -}}
{{- define "capstan.labels" -}}
app.kubernetes.io/name: capstan-{{ .service }}
app.kubernetes.io/component: {{ .service }}
app.kubernetes.io/part-of: capstan
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ .root.Chart.Name }}-{{ .root.Chart.Version }}
{{- end -}}
