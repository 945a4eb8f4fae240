{{/* Common labels of every object of the release. */}}
{{- define "fleet-agent.labels" -}}
app.kubernetes.io/name: fleet-agent
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The agent image reference. */}}
{{- define "fleet-agent.image" -}}
{{- with .Values.global.cattle.systemDefaultRegistry -}}{{ printf "%s/" (trimSuffix "/" .) }}{{- end -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* RUST_LOG from debug / debugLevel. */}}
{{- define "fleet-agent.logLevel" -}}
{{- if gt (int .Values.debugLevel) 0 -}}trace{{- else if .Values.debug -}}debug{{- else -}}info{{- end -}}
{{- end -}}
