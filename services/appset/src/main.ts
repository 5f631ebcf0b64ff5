// appset: owns ApplicationSets. main.ts only wires configuration to startAppset.
import { runService } from '@capstan/service';
import { appsetSettings } from './settings.js';
import { startAppset } from './appset-service.js';

await runService({ name: 'appset', settings: appsetSettings, start: startAppset });
