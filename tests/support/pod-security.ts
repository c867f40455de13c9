/** A rendered Kubernetes object, as `helm template` emits it. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; [key: string]: unknown };
  [key: string]: any;
}

/** Volume types the "restricted" profile allows (Pod Security Standards, v1.30). */
const RESTRICTED_VOLUMES = new Set([
  'configMap',
  'csi',
  'downwardAPI',
  'emptyDir',
  'ephemeral',
  'persistentVolumeClaim',
  'projected',
  'secret',
]);
const SAFE_SYSCTLS = new Set([
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.ip_unprivileged_port_start',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_local_reserved_ports',
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
]);
const SELINUX_TYPES = new Set(['', 'container_t', 'container_init_t', 'container_kvm_t', 'container_engine_t']);

/**
 * The Pod Security Standards "baseline" and "restricted" rules, checked on a workload's pod
 * template, plus this chart's own rule that the root filesystem is read-only. Each violation
 * starts with the field it is about.
 */
export function restrictedViolations(workload: K8sObject): string[] {
  const pod = workload.kind === 'Pod' ? workload.spec : workload.spec?.template?.spec;
  if (!pod) return [`spec: ${workload.kind} has no pod template`];
  const out: string[] = [];
  const psc = pod.securityContext ?? {};
  const containers: any[] = [...(pod.containers ?? []), ...(pod.initContainers ?? []), ...(pod.ephemeralContainers ?? [])];

  for (const field of ['hostNetwork', 'hostPID', 'hostIPC'] as const) if (pod[field]) out.push(`${field}: set on the pod`);
  if (psc.windowsOptions?.hostProcess) out.push('hostProcess: set on the pod');
  for (const v of pod.volumes ?? []) {
    const type = Object.keys(v).find((k) => k !== 'name');
    if (!type || !RESTRICTED_VOLUMES.has(type)) out.push(`volumes: ${v.name} is ${type}`);
  }
  for (const s of psc.sysctls ?? []) if (!SAFE_SYSCTLS.has(s.name)) out.push(`sysctls: ${s.name} is not safe`);
  if (psc.runAsUser === 0) out.push('runAsUser: 0 on the pod');
  if (psc.runAsNonRoot === false) out.push('runAsNonRoot: false on the pod');
  if (psc.seccompProfile?.type === 'Unconfined') out.push('seccompProfile: Unconfined on the pod');
  if (psc.seLinuxOptions && !seLinuxAllowed(psc.seLinuxOptions)) out.push('seLinuxOptions: not allowed on the pod');
  if (psc.appArmorProfile && !['RuntimeDefault', 'Localhost'].includes(psc.appArmorProfile.type))
    out.push('appArmorProfile: not allowed on the pod');

  for (const c of containers) {
    const sc = c.securityContext ?? {};
    const who = `container ${c.name}`;
    if (sc.privileged) out.push(`privileged: ${who}`);
    if (sc.windowsOptions?.hostProcess) out.push(`hostProcess: ${who}`);
    if (sc.procMount && sc.procMount !== 'Default') out.push(`procMount: ${who}`);
    if (sc.seLinuxOptions && !seLinuxAllowed(sc.seLinuxOptions)) out.push(`seLinuxOptions: ${who}`);
    if (sc.appArmorProfile && !['RuntimeDefault', 'Localhost'].includes(sc.appArmorProfile.type)) out.push(`appArmorProfile: ${who}`);
    for (const p of c.ports ?? []) if (p.hostPort) out.push(`hostPort: ${who} port ${p.hostPort}`);
    if (sc.allowPrivilegeEscalation !== false) out.push(`allowPrivilegeEscalation: ${who} does not set it false`);
    const nonRoot = sc.runAsNonRoot ?? psc.runAsNonRoot;
    if (nonRoot !== true) out.push(`runAsNonRoot: ${who} may run as root`);
    if (sc.runAsUser === 0) out.push(`runAsUser: ${who} runs as 0`);
    const seccomp = sc.seccompProfile?.type ?? psc.seccompProfile?.type;
    if (seccomp !== 'RuntimeDefault' && seccomp !== 'Localhost') out.push(`seccompProfile: ${who} has ${seccomp ?? 'none'}`);
    const caps = sc.capabilities ?? {};
    if (!(caps.drop ?? []).includes('ALL')) out.push(`capabilities: ${who} does not drop ALL`);
    for (const cap of caps.add ?? []) if (cap !== 'NET_BIND_SERVICE') out.push(`capabilities: ${who} adds ${cap}`);
    if (sc.readOnlyRootFilesystem !== true) out.push(`readOnlyRootFilesystem: ${who} can write its root filesystem`);
  }
  return out;
}

function seLinuxAllowed(o: { type?: string; user?: string; role?: string }): boolean {
  return SELINUX_TYPES.has(o.type ?? '') && !o.user && !o.role;
}
