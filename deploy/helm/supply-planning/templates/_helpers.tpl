{{- define "supply.fullname" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}

{{/* The five services in port order: a service listens on grpc.basePort + its index. */}}
{{- define "supply.serviceNames" -}}tokens reference transactional compute workflows{{- end -}}

{{- define "supply.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* Selector of one component's pods (unchanged since 0.1.0: a Deployment's selector cannot change). */}}
{{- define "supply.selector" -}}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .name }}
{{- end -}}

{{- define "supply.secretName" -}}
{{- if .Values.secrets.existingSecret -}}{{ .Values.secrets.existingSecret }}{{- else -}}{{ include "supply.fullname" . }}-secrets{{- end -}}
{{- end -}}

{{- define "supply.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}{{ default (include "supply.fullname" .) .Values.serviceAccount.name }}{{- else -}}{{ default "default" .Values.serviceAccount.name }}{{- end -}}
{{- end -}}

{{- define "supply.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ default .Chart.AppVersion .Values.image.tag }}
{{- end -}}
{{- end -}}

{{- define "supply.distributed" -}}{{ eq .Values.mode "distributed" | ternary "true" "" }}{{- end -}}
{{- define "supply.tls" -}}{{ and (eq .Values.mode "distributed") .Values.grpc.tls.enabled | ternary "true" "" }}{{- end -}}

{{/*
The Deployments of the mode, as a JSON list: name (component label and name suffix), target
(--target), http (the gateway answers HTTP), port (gRPC port of a service), values (its block).
*/}}
{{- define "supply.components" -}}
{{- $list := list -}}
{{- if eq .Values.mode "allInOne" -}}
{{- $list = append $list (dict "name" "all-in-one" "target" "all" "http" true "values" .Values.allInOne) -}}
{{- else -}}
{{- $list = append $list (dict "name" "gateway" "target" "gateway" "http" true "values" .Values.gateway) -}}
{{- range $i, $s := include "supply.serviceNames" . | splitList " " -}}
{{- $list = append $list (dict "name" $s "target" $s "http" false "port" (add $.Values.grpc.basePort $i) "values" (index $.Values.services $s)) -}}
{{- end -}}
{{- end -}}
{{- toJson $list -}}
{{- end -}}

{{/* Address of a service as its peers dial it: the headless Service, resolved by grpc-js to every ready pod. */}}
{{- define "supply.peerAddr" -}}
dns:///{{ include "supply.fullname" .root }}-{{ .name }}:{{ .port }}
{{- end -}}

{{/* Environment from the Secret; a backend URL only where this component uses it. */}}
{{- define "supply.secretEnv" -}}
{{- $root := .root -}}
{{- $secret := include "supply.secretName" $root -}}
{{- $existing := $root.Values.secrets.existingSecret -}}
- name: SERVICE_CREDENTIAL
  valueFrom: { secretKeyRef: { name: {{ $secret }}, key: SERVICE_CREDENTIAL } }
- name: CURSOR_SECRET
  valueFrom: { secretKeyRef: { name: {{ $secret }}, key: CURSOR_SECRET } }
{{- if eq .c.target "all" }}
{{- range $var, $url := dict "MONGODB_URL" $root.Values.backends.mongodbUrl "AMQP_URL" $root.Values.backends.amqpUrl "REDIS_URL" $root.Values.backends.redisUrl }}
{{- if or $existing $url }}
- name: {{ $var }}
  valueFrom: { secretKeyRef: { name: {{ $secret }}, key: {{ $var }}{{ if $existing }}, optional: true{{ end }} } }
{{- end }}
{{- end }}
{{- else }}
{{- if ne .c.target "gateway" }}
- name: MONGODB_URL
  valueFrom: { secretKeyRef: { name: {{ $secret }}, key: MONGODB_URL_{{ upper .c.target }} } }
{{- end }}
- name: AMQP_URL
  valueFrom: { secretKeyRef: { name: {{ $secret }}, key: AMQP_URL } }
- name: REDIS_URL
  valueFrom: { secretKeyRef: { name: {{ $secret }}, key: REDIS_URL } }
{{- end }}
{{- end -}}

{{/* Pod annotations that change when configuration or (chart-made) secrets change, so pods roll. */}}
{{- define "supply.checksums" -}}
checksum/config: {{ include (print .Template.BasePath "/configmap.yaml") . | sha256sum }}
{{- if not .Values.secrets.existingSecret }}
checksum/secret: {{ include (print .Template.BasePath "/secret.yaml") . | sha256sum }}
{{- end }}
{{- end -}}

{{/* Refuses values that would render a broken release. */}}
{{- define "supply.validate" -}}
{{- $v := .Values -}}
{{- $s := $v.shutdown -}}
{{- if ge (add $s.preStopSleepSeconds $s.timeoutSeconds) (int $s.terminationGracePeriodSeconds) -}}
{{- fail "shutdown: preStopSleepSeconds + timeoutSeconds must stay below terminationGracePeriodSeconds (the kubelet kills at the grace period)" -}}
{{- end -}}
{{- if eq $v.mode "distributed" -}}
{{- if not $v.secrets.existingSecret -}}
{{- if or (not $v.backends.amqpUrl) (not $v.backends.redisUrl) -}}
{{- fail "distributed mode needs backends.amqpUrl and backends.redisUrl (or secrets.existingSecret): the embedded bus and meter span one process" -}}
{{- end -}}
{{- range $s := include "supply.serviceNames" . | splitList " " -}}
{{- if not (or (index $v.backends.mongodbUrls $s) $v.backends.mongodbUrl) -}}
{{- fail (printf "distributed mode needs a MongoDB URL for %s: backends.mongodbUrls.%s or backends.mongodbUrl (or secrets.existingSecret)" $s $s) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if and $v.grpc.tls.enabled (not $v.grpc.tls.secretName) -}}
{{- fail "grpc.tls.enabled needs grpc.tls.secretName (a Secret with tls.crt, tls.key and ca.crt)" -}}
{{- end -}}
{{- else -}}
{{- $a := $v.allInOne -}}
{{- $embedded := not (or $v.secrets.existingSecret (and $v.backends.mongodbUrl $v.backends.amqpUrl $v.backends.redisUrl)) -}}
{{- if and (or $embedded $a.persistence.enabled) (or (gt (int $a.replicas) 1) $a.autoscaling.enabled) -}}
{{- fail "allInOne with the embedded store or a persistent volume runs one replica: set allInOne.replicas 1 and no autoscaling, or give MongoDB, RabbitMQ and Redis with allInOne.persistence.enabled false" -}}
{{- end -}}
{{- end -}}
{{- end -}}
