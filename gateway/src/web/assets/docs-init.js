// The interactive reference over this server's own document: no CDN, no proxy, no web fonts.
(function () {
  'use strict';
  window.Scalar.createApiReference('#reference', {
    url: '/openapi.json',
    withDefaultFonts: false,
    hideDownloadButton: false,
    telemetry: false,
    baseServerURL: window.location.origin,
    servers: [{ url: window.location.origin, description: 'This server' }],
    authentication: { preferredSecurityScheme: 'bearer' },
    persistAuth: true,
    // No "Ask AI" agent and no registry search: both call Scalar's hosted services.
    agent: { disabled: true },
    showDeveloperTools: 'never',
  });
})();
