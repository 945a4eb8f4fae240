{{- define "greeting.fullname" -}}
{{ .Release.Name }}-{{ .Chart.Name }}
{{- end -}}
