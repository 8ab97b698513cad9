// Every `svc` command, in the order `svc --help` lists them.
import type { CliCommand } from '../command.ts';
import { auditVerify } from './audit-verify.ts';
import { authOutbox } from './auth-outbox.ts';
import { eventsTail } from './events-tail.ts';
import { keyCreate } from './key-create.ts';
import { keyRegister } from './key-register.ts';
import { ledgerVerify } from './ledger-verify.ts';
import { login, logout } from './login.ts';
import { migrateCommand } from './migrate.ts';
import { receiptVerify } from './receipt-verify.ts';
import { signingKeyRetire, signingKeyRotate, signingKeyStage } from './signing-key.ts';
import { standingRebuild } from './standing-rebuild.ts';
import { tenantCreate } from './tenant-create.ts';
import { userCreate } from './user-create.ts';
import { whoami } from './whoami.ts';

export const cliCommands: readonly CliCommand[] = [
  tenantCreate,
  keyCreate,
  keyRegister,
  userCreate,
  authOutbox,
  login,
  logout,
  whoami,
  eventsTail,
  migrateCommand,
  ledgerVerify,
  auditVerify,
  receiptVerify,
  standingRebuild,
  signingKeyStage,
  signingKeyRotate,
  signingKeyRetire,
];
