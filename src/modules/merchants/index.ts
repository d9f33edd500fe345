// The merchants module's public entry: what other modules, the API and the processes may use of it.
export { DemoKeyMismatchError, ensureDemoMerchant, generateDemoKeys } from './demo.ts';
export { apiKeyTag, CONNECTED_MERCHANT_HEADER, usableKeyWhere, type ApiKeyService } from './key-service.ts';
export { profileById, profileFor, profilesTag } from './profile-service.ts';
export { profileSettings, sealedSigningKeys, type ProfileSettings } from './profile-settings.ts';
export { connectedAmong, platformSpokenFor, PlatformMembers, processorAccountsOf } from './platform-members.ts';
