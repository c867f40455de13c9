{{- define "supply.fullname" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}

{{- define "supply.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "supply.secretName" -}}
{{- if .Values.secrets.existingSecret -}}{{ .Values.secrets.existingSecret }}{{- else -}}{{ include "supply.fullname" . }}-secrets{{- end -}}
{{- end -}}

{{/* Environment shared by every target: backends, peers, secrets. */}}
{{- define "supply.env" -}}
- name: LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
- name: GRPC_HOST
  value: "0.0.0.0"
- name: GRPC_BASE_PORT
  value: {{ .Values.grpcBasePort | quote }}
- name: SEED_DEMO
  value: {{ ternary "1" "0" .Values.seedDemo | quote }}
- name: MONGODB_URL
  value: {{ .Values.backends.mongodbUrl | quote }}
- name: AMQP_URL
  value: {{ .Values.backends.amqpUrl | quote }}
- name: REDIS_URL
  value: {{ .Values.backends.redisUrl | quote }}
{{- $root := . }}
{{- range $name, $svc := .Values.services }}
- name: {{ upper $name }}_ADDR
  value: "{{ include "supply.fullname" $root }}-{{ $name }}:{{ add $root.Values.grpcBasePort $svc.index }}"
{{- end }}
- name: SERVICE_CREDENTIAL
  valueFrom:
    secretKeyRef: { name: {{ include "supply.secretName" . }}, key: SERVICE_CREDENTIAL }
- name: CURSOR_SECRET
  valueFrom:
    secretKeyRef: { name: {{ include "supply.secretName" . }}, key: CURSOR_SECRET }
{{- end -}}
