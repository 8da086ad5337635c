// oidc-provider ships no type declarations (and @types/oidc-provider is not a dependency): the tests
// use it through test/support/oidc-provider.ts only, untyped.
declare module "oidc-provider";
