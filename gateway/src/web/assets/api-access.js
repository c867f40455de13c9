// API Access page behaviour: copy the new token, confirm revocation, "All Permissions" covers the rest.
// Served same-origin (the page's CSP allows 'self' scripts only); the page works without it.
'use strict';

document.addEventListener('DOMContentLoaded', () => {
  const copy = document.getElementById('copy-token');
  if (copy) {
    copy.addEventListener('click', async () => {
      const field = document.getElementById(copy.dataset.copyTarget);
      const status = document.getElementById('copy-status');
      field.select();
      try {
        await navigator.clipboard.writeText(field.value);
      } catch {
        document.execCommand('copy');
      }
      if (status) status.textContent = 'Copied.';
    });
  }

  for (const form of document.querySelectorAll('form.revoke')) {
    form.addEventListener('submit', (event) => {
      const name = form.dataset.tokenName || 'this token';
      if (!window.confirm(`Revoke “${name}”? Anything using it stops working immediately.`)) event.preventDefault();
    });
  }

  const all = document.querySelector('#create-token input[name="scopes"][value="*"]');
  if (all && !all.disabled) {
    const others = [...document.querySelectorAll('#create-token input[name="scopes"]')].filter((b) => b !== all && !b.disabled);
    const sync = () => {
      for (const box of others) {
        if (all.checked) box.checked = true;
        box.disabled = all.checked;
      }
    };
    all.addEventListener('change', sync);
    sync();
  }
});
