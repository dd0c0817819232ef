{{/*
kvgen.podTemplate: the pod template shared by the Deployment and the StatefulSets, laid out from
one pod of the context (kvgen.context: workloads[].pod). Values are emitted with toJson (JSON is
YAML), so no value can break the document. kvgen's templates/_pod.yaml.j2 is generated from it.
Usage: {{- include "kvgen.podTemplate" $workload.pod | nindent 4 }}
*/}}
{{- define "kvgen.podTemplate" -}}
{{- $pod := . -}}
metadata:
  labels: {{ toJson $pod.labels }}
  annotations: {{ toJson $pod.annotations }}
spec:
  {{- if $pod.serviceAccountName }}
  serviceAccountName: {{ toJson $pod.serviceAccountName }}
  {{- end }}
  # vLLM and LMCache never call the Kubernetes API: no token unless pod.serviceAccount.automountToken
  automountServiceAccountToken: {{ toJson $pod.automountServiceAccountToken }}
  {{- if $pod.imagePullSecrets }}
  imagePullSecrets: {{ toJson $pod.imagePullSecrets }}
  {{- end }}
  securityContext: {{ toJson $pod.securityContext }}
  {{- if $pod.nodeSelector }}
  nodeSelector: {{ toJson $pod.nodeSelector }}
  {{- end }}
  {{- if $pod.tolerations }}
  tolerations: {{ toJson $pod.tolerations }}
  {{- end }}
  {{- if $pod.affinity }}
  affinity: {{ toJson $pod.affinity }}
  {{- end }}
  {{- if $pod.topologySpreadConstraints }}
  topologySpreadConstraints: {{ toJson $pod.topologySpreadConstraints }}
  {{- end }}
  {{- if $pod.priorityClassName }}
  priorityClassName: {{ toJson $pod.priorityClassName }}
  {{- end }}
  {{- if $pod.runtimeClassName }}
  runtimeClassName: {{ toJson $pod.runtimeClassName }}
  {{- end }}
  {{- if $pod.resourceClaims }}
  # gpuAccess dra: the pod's GPUs, claimed once; vLLM and the LMCache sidecar both list the claim
  resourceClaims: {{ toJson $pod.resourceClaims }}
  {{- end }}
  {{- if $pod.sidecar }}
  initContainers:
    # LMCache MP server as a native sidecar: starts (and must answer its health check) before vLLM
    - name: {{ toJson $pod.sidecar.name }}
      image: {{ toJson $pod.sidecar.image }}
      restartPolicy: Always
      command: {{ toJson $pod.sidecar.command }}
      args: {{ toJson $pod.sidecar.args }}
      {{- if $pod.sidecar.env }}
      env: {{ toJson $pod.sidecar.env }}
      {{- end }}
      resources: {{ toJson $pod.sidecar.resources }}
      securityContext: {{ toJson $pod.sidecar.securityContext }}
      startupProbe:
        exec:
          command: {{ toJson $pod.sidecar.probeCommand }}
        periodSeconds: 2
        timeoutSeconds: 3
        failureThreshold: 150
      volumeMounts: {{ toJson $pod.sidecar.volumeMounts }}
  {{- end }}
  containers:
    - name: {{ toJson $pod.vllm.name }}
      image: {{ toJson $pod.vllm.image }}
      {{- if $pod.vllm.command }}
      # gpuAccess in-container: kvgen's launcher starts the LMCache server, then `vllm serve`
      command: {{ toJson $pod.vllm.command }}
      {{- end }}
      args: {{ toJson $pod.vllm.args }}
      {{- if $pod.vllm.env }}
      env: {{ toJson $pod.vllm.env }}
      {{- end }}
      ports: {{ toJson $pod.vllm.ports }}
      resources: {{ toJson $pod.vllm.resources }}
      securityContext: {{ toJson $pod.vllm.securityContext }}
      {{- if $pod.vllm.probes }}
      startupProbe:
        httpGet: {path: /health, port: http}
        periodSeconds: 10
        failureThreshold: 180
      readinessProbe:
        httpGet: {path: /health, port: http}
        periodSeconds: 5
        failureThreshold: 3
      livenessProbe:
        httpGet: {path: /health, port: http}
        periodSeconds: 10
        failureThreshold: 3
      {{- end }}
      volumeMounts: {{ toJson $pod.vllm.volumeMounts }}
  volumes: {{ toJson $pod.volumes }}
{{- end -}}
