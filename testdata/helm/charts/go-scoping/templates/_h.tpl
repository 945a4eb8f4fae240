{{- define "shared" -}}from-parent{{- end -}}
{{- define "p2.def" -}}def:{{ $.Values.name }}{{- end -}}
{{- define "p2.args" -}}{{ .a }}/{{ .b }}{{- end -}}
