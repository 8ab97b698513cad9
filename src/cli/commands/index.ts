// Every `svc` command, in the order `svc --help` lists them.
import type { CliCommand } from '../command.ts';
import { auditVerify } from './audit-verify.ts';
import { authOutbox } from './auth-outbox.ts';
import { keyCreate } from './key-create.ts';
import { keyRegister } from './key-register.ts';
import { ledgerVerify } from './ledger-verify.ts';
import { migrateCommand } from './migrate.ts';
import { signingKeyRetire, signingKeyRotate, signingKeyStage } from './signing-key.ts';
import { tenantCreate } from './tenant-create.ts';
import { userCreate } from './user-create.ts';

export const cliCommands: readonly CliCommand[] = [
  tenantCreate,
  keyCreate,
  keyRegister,
  userCreate,
  authOutbox,
  migrateCommand,
  ledgerVerify,
  auditVerify,
  signingKeyStage,
  signingKeyRotate,
  signingKeyRetire,
];
