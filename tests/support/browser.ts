import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { isRequired } from './require';

/** Debian's chromium; the browser tests skip, saying why, when it is not installed (and fail when REQUIRE_CHROMIUM=1). */
export const CHROMIUM = '/usr/bin/chromium';

/** Why the browser tests cannot run here, or null. Throws instead when REQUIRE_CHROMIUM=1 (CI installed it: no skipping). */
export function chromiumMissing(): string | null {
  const missing = existsSync(CHROMIUM) ? null : `${CHROMIUM} is not installed (apt-get install chromium)`;
  if (missing && isRequired('CHROMIUM')) throw new Error(`REQUIRE_CHROMIUM=1 but ${missing}: the browser tests must not skip`);
  return missing;
}

/** Headless chromium with nothing running in the background that could reach the network. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}
