// A real browser for the tests a person's view matters to (the consent
// pages, the console): Debian's chromium, headless, driven by
// playwright-core (npm), never a download.
//
//   browser()        one persistent context per test file (launching
//                    costs seconds): reuse it; call closeBrowsers() in
//                    after()
//   closeBrowsers()  closes it
//   ARTEFACTS        where screenshots go: build/interop-artefacts/
//                    (build-san/ for the sanitizer build)
//   screenshot(page, stem)  saves the page there: its path
import fsp from 'node:fs/promises';
import path from 'node:path';

import { ROOT, tmpDir } from './harness.mjs';

export const ARTEFACTS = path.join(ROOT, process.env.VMCPD_BIN &&
  process.env.VMCPD_BIN.includes('build-san') ? 'build-san' : 'build', 'interop-artefacts');

let pw = null;
let shared = null;

/* a headless chromium on a fresh profile under a temp dir */
export async function browser() {
  if (shared)
    return shared;
  pw ??= (await import('playwright-core')).chromium;
  const dir = await tmpDir('vmcpd-chromium-');
  shared = await pw.launchPersistentContext(path.join(dir, 'profile'), {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  return shared;
}

export async function closeBrowsers() {
  await shared?.close().catch(() => {});
  shared = null;
}

let shots = 0;

export async function screenshot(page, stem, opts = {}) {
  await fsp.mkdir(ARTEFACTS, { recursive: true });
  const file = path.join(ARTEFACTS, `${stem}-${process.pid}-${++shots}.png`);
  await page.screenshot({ path: file, ...opts });
  return file;
}
