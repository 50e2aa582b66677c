// The address of a one-time link to the dashboard, made by the operator CLI, `npm start` and the
// gateway alike: the token travels in the fragment, which browsers never send, so no server, proxy
// or access log sees it; the dashboard's page reads it and posts it once.
export const DASHBOARD_PATH = "/dashboard";

/** `base`: the gateway's public address (scheme, host, optional path prefix), without a trailing slash. */
export const passwordLinkAddress = (base: string, token: string) => `${base}${DASHBOARD_PATH}/#/set-password/${token}`;
