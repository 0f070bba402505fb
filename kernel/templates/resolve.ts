/**
 * What the create-agent route asks of templates: the config of a usable template, or a 422
 * refusal (`template_missing`, `template_invalid`, `template_unreviewed`).
 */
import type { Logger } from '@agt/contracts';
import type { SettingsStore } from '../settings.js';
import { templateInvalid, templateMissing, templateUnreviewed } from './errors.js';
import { asTemplateConfig } from './parse.js';
import { STANDARD_TEMPLATE_ID } from './standard.js';
import { TemplateStore } from './store.js';
import type { TemplateConfig } from './types.js';

export interface ResolvedTemplate {
  id: string;
  builtin: boolean;
  /** A fresh copy: the caller fills in id, name (and may override model) without touching the template. */
  config: TemplateConfig;
}

interface TemplateKernel {
  dataDir: string;
  settings: SettingsStore;
  logger: Logger;
}

export function templateStore(kernel: TemplateKernel): TemplateStore {
  return new TemplateStore(kernel.dataDir, () => kernel.settings.current(), kernel.logger);
}

/** `settings.defaultTemplateId`, else `standard`. */
export function defaultTemplateId(kernel: Pick<TemplateKernel, 'settings'>): string {
  return kernel.settings.current().defaultTemplateId ?? STANDARD_TEMPLATE_ID;
}

/**
 * The template's config for a new agent. Checks in this order: exists (`template_missing`), valid
 * (`template_invalid`, naming the problem), reviewed on this machine (`template_unreviewed`). All 422.
 */
export function resolveTemplate(kernel: TemplateKernel, id: string): ResolvedTemplate {
  const template = templateStore(kernel).get(id);
  if (!template) throw templateMissing(id);
  if (!template.valid || !template.config) {
    throw templateInvalid(id, template.error);
  }
  if (!template.reviewed) {
    throw templateUnreviewed(id);
  }
  return {
    id,
    builtin: template.builtin,
    config: asTemplateConfig(structuredClone(template.config) as Record<string, unknown>),
  };
}
