// The request-time check of a webhook_url (WH-HTTPS-PUBLIC): the rule lives in
// contract/webhookUrl.ts, where the conformance proxy reads it too (the runner may not
// import the server). Re-exported here so that the domain's imports keep their place.
export { checkWebhookUrl, type ServiceMode } from '../../../contract/webhookUrl.ts';
