// The appset service's own settings (on top of the common ones in @capstan/service).
import type { Settings } from '@capstan/service';

export const appsetSettings = {} satisfies Settings;
