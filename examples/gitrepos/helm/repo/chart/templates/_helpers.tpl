{{- define "guestbook.labels" -}}
app: {{ .Release.Name }}
environment: {{ .Values.environment }}
{{- end -}}
