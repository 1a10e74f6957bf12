// Which hosts a webhook may target: the rule lives in contract/webhookUrl.ts, where the
// conformance proxy reads it too (the runner may not import the server). Re-exported
// here so that the domain's and the dispatcher's imports keep their place.
export { canonicalName, isIpLiteral, isLinkLocalOrMetadata, isLocalName, isMetadataName, isPublicIp, productionRefusal, resolvedAddressRefusal, sandboxRefusal } from '../../../contract/webhookUrl.ts';
