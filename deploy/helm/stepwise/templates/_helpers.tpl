{{- define "stepwise.name" -}}{{ .Release.Name }}-stepwise{{- end -}}

{{- define "stepwise.labels" -}}
app.kubernetes.io/name: stepwise
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}

{{- define "stepwise.redisUrl" -}}
{{- if .Values.redis.externalUrl -}}{{ .Values.redis.externalUrl }}{{- else -}}redis://:$(REDIS_PASSWORD)@{{ include "stepwise.name" . }}-redis:6379/0{{- end -}}
{{- end -}}

{{- define "stepwise.env" -}}
- name: REDIS_PASSWORD
  valueFrom: {secretKeyRef: {name: {{ .Values.existingSecret }}, key: redis-password, optional: true}}
- name: STEPWISE_REDIS_URL
  value: {{ include "stepwise.redisUrl" . | quote }}
- name: STEPWISE_APP_ID
  value: {{ required "app.id is required (the GitHub App's id)" .Values.app.id | quote }}
- name: STEPWISE_APP_SLUG
  value: {{ .Values.app.slug | quote }}
- name: STEPWISE_GITHUB_API_URL
  value: {{ .Values.app.githubApiUrl | quote }}
- name: STEPWISE_LOG_FORMAT
  value: {{ .Values.app.logFormat | quote }}
{{- with .Values.app.taskCenterUrl }}
- name: STEPWISE_TASK_CENTER_URL
  value: {{ . | quote }}
{{- end }}
{{- range $name, $value := .Values.extraEnv }}
- name: {{ $name }}
  value: {{ $value | quote }}
{{- end }}
{{- end -}}
