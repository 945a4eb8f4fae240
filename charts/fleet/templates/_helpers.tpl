{{/* Common labels of every object of the release. */}}
{{- define "fleet.labels" -}}
app.kubernetes.io/name: fleet
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* "<registry>/" when global.cattle.systemDefaultRegistry is set. */}}
{{- define "fleet.registry" -}}
{{- with .Values.global.cattle.systemDefaultRegistry -}}{{ printf "%s/" (trimSuffix "/" .) }}{{- end -}}
{{- end -}}

{{/* The controller image reference. */}}
{{- define "fleet.image" -}}
{{ include "fleet.registry" . }}{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* The local agent image reference (falls back to the controller image). */}}
{{- define "fleet.agentImage" -}}
{{ include "fleet.registry" . }}{{ .Values.agentImage.repository | default .Values.image.repository }}:{{ .Values.agentImage.tag | default .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* The namespace of the local agent (Fleet's default: cattle-fleet-system). */}}
{{- define "fleet.agentNamespace" -}}
{{ .Values.bootstrap.agentNamespace | default "cattle-fleet-system" }}
{{- end -}}

{{/*
The cluster namespace the controller gives Cluster `local` of bootstrap.namespace:
SafeConcatName("cluster", <ns>, "local", KeyHash("<ns>::local")), as Fleet names it.
*/}}
{{- define "fleet.localClusterNamespace" -}}
{{- $ns := .Values.bootstrap.namespace -}}
{{- $full := printf "cluster-%s-local-%s" $ns (printf "%s::local" $ns | sha256sum | trunc 12) -}}
{{- if lt (len $full) 64 -}}
{{ $full }}
{{- else if regexMatch "^[a-z0-9]$" (substr 56 57 $full) -}}
{{ printf "%s-%s" (trunc 57 $full) (sha256sum $full | trunc 5) }}
{{- else -}}
{{ printf "%s-%s" (trunc 56 $full) (sha256sum $full | trunc 6) }}
{{- end -}}
{{- end -}}

{{/* RUST_LOG from debug / debugLevel. */}}
{{- define "fleet.logLevel" -}}
{{- if gt (int .Values.debugLevel) 0 -}}trace{{- else if .Values.debug -}}debug{{- else -}}info{{- end -}}
{{- end -}}

{{/* Pod security context: non-root (distroless nonroot user), default seccomp profile. */}}
{{- define "fleet.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
fsGroup: 65532
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* Container security context: read-only root filesystem, no privilege escalation, no capabilities. */}}
{{- define "fleet.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
capabilities:
  drop:
    - ALL
{{- end -}}

{{/* Scheduling fields shared by the controller and the local agent. */}}
{{- define "fleet.scheduling" -}}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.priorityClassName }}
priorityClassName: {{ . | quote }}
{{- end }}
{{- with .Values.global.cattle.imagePullSecrets }}
imagePullSecrets:
  {{- range . }}
  {{- if kindIs "string" . }}
  - name: {{ . | quote }}
  {{- else }}
  - {{ toYaml . | nindent 4 | trim }}
  {{- end }}
  {{- end }}
{{- end }}
{{- end -}}

{{/* Environment shared by the controller and the local agent. */}}
{{- define "fleet.commonEnv" -}}
- name: RUST_LOG
  value: {{ include "fleet.logLevel" . | quote }}
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}
