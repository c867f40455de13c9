import type { supply_tokens_v1 } from '@supply/contracts';
import { tokenStatus } from '../routes/tokens';

/** Escapes text for HTML element content and double-quoted attribute values. */
export function esc(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The permission checkboxes of the create form, in the order the product shows them. */
export const PERMISSIONS = [
  { scope: 'public_api.read', label: 'Read', help: 'All GET data endpoints (reference and transactional).' },
  { scope: 'public_api.write', label: 'Write', help: 'Create and update on write endpoints.' },
  { scope: 'public_api.compute', label: 'Compute', help: 'Supply plan and forecast generation.' },
  { scope: 'public_api.workflow', label: 'Workflow Sync', help: 'Inventory and sales sync workflows.' },
  { scope: 'public_api.workflow.replace', label: 'Workflow Replace', help: 'Replace mode, in addition to Workflow Sync.' },
  { scope: '*', label: 'All Permissions', help: 'Every endpoint.' },
] as const;
export const EXPIRY_CHOICES = [
  { value: 'none', label: 'No expiration' },
  { value: '30', label: '30 days' },
  { value: '90', label: '90 days' },
  { value: '365', label: '365 days' },
] as const;

const labelOf = (scope: string) => PERMISSIONS.find((p) => p.scope === scope)?.label ?? scope;
const when = (iso: string, never: string) => (iso ? `${iso.slice(0, 16).replace('T', ' ')} UTC` : never);

const STYLE = `
body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1d2433;background:#f5f6f8}
header{background:#1d2433;color:#fff;padding:.75rem 1.5rem;display:flex;justify-content:space-between;align-items:center}
header form{margin:0 0 0 .75rem;display:inline} header button{background:none;border:1px solid #fff;color:#fff}
main{max-width:980px;margin:1.5rem auto;padding:0 1rem}
section{background:#fff;border:1px solid #dde1e7;border-radius:6px;padding:1rem 1.25rem;margin-bottom:1.25rem}
nav.tabs{border-bottom:1px solid #dde1e7;margin-bottom:1rem} nav.tabs span{display:inline-block;padding:.4rem .9rem;border-bottom:2px solid #2f6fde;font-weight:600}
table{width:100%;border-collapse:collapse} th,td{text-align:left;padding:.45rem .4rem;border-bottom:1px solid #eef0f3;vertical-align:top}
label{display:block;margin:.35rem 0} fieldset{border:1px solid #dde1e7;border-radius:4px}
input[type=text],input[type=email],input[type=password],select{padding:.4rem;width:22rem;max-width:100%}
button{padding:.4rem .9rem;border-radius:4px;border:1px solid #2f6fde;background:#2f6fde;color:#fff;cursor:pointer}
button.danger{background:#fff;color:#b42318;border-color:#b42318}
.error{color:#b42318} .notice{background:#e8f4ea;border:1px solid #9bd0a5;padding:.6rem .9rem;border-radius:4px}
.new-token{background:#fff8e5;border:1px solid #f0c36d;padding:.8rem 1rem;border-radius:4px}
.new-token input{width:100%;box-sizing:border-box;font-family:ui-monospace,monospace}
.muted{color:#69707d} .disabled{color:#9aa0ab}
.chart{min-height:320px} dl.facts{display:grid;grid-template-columns:10rem 1fr;gap:.2rem .8rem} dl.facts dt{color:#69707d}
`;

/** `head`: extra same-origin stylesheets and scripts of one page. */
export function layout(opts: { title: string; body: string; header?: string; head?: string }): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(opts.title)}</title><style>${STYLE}</style><script src="/assets/api-access.js" defer></script>${opts.head ?? ''}</head>
<body><header><strong>Supply Planning</strong>${opts.header ?? ''}</header><main>${opts.body}</main></body></html>`;
}

export function messagePage(title: string, text: string): string {
  return layout({ title, body: `<section><h1>${esc(title)}</h1><p>${esc(text)}</p></section>` });
}

export function loginPage(opts: { tenant: supply_tokens_v1.Tenant; csrf: string; email?: string; error?: string }): string {
  const t = opts.tenant;
  return layout({
    title: `Log in · ${t.name}`,
    body: `<section><h1>Log in to ${esc(t.name)}</h1>
${opts.error ? `<p class="error" role="alert">${esc(opts.error)}</p>` : ''}
<form method="post" action="/${esc(t.slug)}/login">
<input type="hidden" name="_token" value="${esc(opts.csrf)}">
<label>Email <br><input type="email" name="email" autocomplete="username" required value="${esc(opts.email ?? '')}"></label>
<label>Password <br><input type="password" name="password" autocomplete="current-password" required></label>
<p><button type="submit">Log in</button></p>
</form></section>`,
  });
}

export interface ApiAccessView {
  tenant: supply_tokens_v1.Tenant;
  session: supply_tokens_v1.Session;
  csrf: string;
  tokens: supply_tokens_v1.TokenInfo[];
  now: Date;
  /** The token just created: its only appearance. */
  created?: { name: string; plain: string };
  notice?: string;
  errors?: Record<string, string[]>;
  old?: { name?: string; expiry?: string; scopes?: string[] };
}

function tokenRows(v: ApiAccessView): string {
  if (v.tokens.length === 0) return '<tr><td colspan="7" class="muted">No tokens yet.</td></tr>';
  return v.tokens
    .map((t) => {
      const status = tokenStatus(t, v.now);
      const revoke =
        status === 'active'
          ? `<form method="post" action="/${esc(v.tenant.slug)}/settings/api-access/tokens/${t.id}/revoke" class="revoke" data-token-name="${esc(t.name)}">
<input type="hidden" name="_token" value="${esc(v.csrf)}"><button type="submit" class="danger">Revoke</button></form>`
          : '';
      return `<tr data-token-id="${t.id}"><td>${esc(t.name)}</td><td>${t.scopes.map((s) => esc(labelOf(s))).join(', ')}</td>
<td>${esc(when(t.created_at, ''))}</td><td>${esc(when(t.expires_at, 'Never'))}</td><td>${esc(when(t.last_used_at, 'Never'))}</td>
<td class="status">${status[0]!.toUpperCase() + status.slice(1)}</td><td>${revoke}</td></tr>`;
    })
    .join('\n');
}

function createForm(v: ApiAccessView): string {
  const errors = v.errors ?? {};
  const err = (field: string) => (errors[field] ? `<p class="error">${esc(errors[field]!.join(' '))}</p>` : '');
  const chosen = new Set(v.old?.scopes ?? []);
  const boxes = PERMISSIONS.map((p) => {
    const allowed = p.scope === 'public_api.read' || v.session.may_grant_privileged;
    return `<label class="${allowed ? '' : 'disabled'}"><input type="checkbox" name="scopes" value="${esc(p.scope)}"${chosen.has(p.scope) && allowed ? ' checked' : ''}${allowed ? '' : ' disabled'}> ${esc(p.label)} <span class="muted">— ${esc(p.help)}</span></label>`;
  }).join('\n');
  const expiry = EXPIRY_CHOICES.map(
    (c) => `<option value="${c.value}"${(v.old?.expiry ?? '90') === c.value ? ' selected' : ''}>${esc(c.label)}</option>`,
  ).join('');
  return `<section><h2>Create token</h2>${err('form')}
<form method="post" action="/${esc(v.tenant.slug)}/settings/api-access/tokens" id="create-token">
<input type="hidden" name="_token" value="${esc(v.csrf)}">
<label>Name <br><input type="text" name="name" maxlength="255" required value="${esc(v.old?.name ?? '')}"></label>${err('name')}
<label>Expiration <br><select name="expiry">${expiry}</select></label>${err('expiry')}
<fieldset><legend>Permissions (at least one)</legend>${boxes}
${v.session.may_grant_privileged ? '' : '<p class="muted">Only Planner (Full Access) users of the Public API module or workspace administrators can grant permissions beyond Read.</p>'}
</fieldset>${err('scopes')}
<p><button type="submit">Create token</button></p></form></section>`;
}

export function apiAccessPage(v: ApiAccessView): string {
  const slug = esc(v.tenant.slug);
  const created = v.created
    ? `<section class="new-token" id="new-token-panel"><h2>Token “${esc(v.created.name)}” created</h2>
<p>Copy it now. It is shown only once and cannot be recovered.</p>
<p><input type="text" id="new-token" readonly value="${esc(v.created.plain)}" aria-label="New token"></p>
<p><button type="button" id="copy-token" data-copy-target="new-token">Copy</button> <span id="copy-status" class="muted" aria-live="polite"></span></p></section>`
    : '';
  return layout({
    title: `API Access · ${v.tenant.name}`,
    header: `<span>${esc(v.session.user!.email)} · ${esc(v.tenant.name)}
<form method="post" action="/${slug}/logout" class="logout"><input type="hidden" name="_token" value="${esc(v.csrf)}"><button type="submit">Log out</button></form></span>`,
    body: `<h1>API Access</h1><p class="muted">Settings › Workspace Settings › API Access</p>
<nav class="tabs"><span>Tokens</span></nav>
${v.notice ? `<p class="notice" role="status">${esc(v.notice)}</p>` : ''}${created}
<section><h2>Your tokens</h2><table id="tokens"><thead><tr><th>Name</th><th>Permissions</th><th>Created</th><th>Expires</th><th>Last used</th><th>Status</th><th></th></tr></thead>
<tbody>${tokenRows(v)}</tbody></table></section>
${createForm(v)}`,
  });
}
