declare module "*.so" {
  const path: string;
  export default path;
}
declare module "*.so.1" {
  const path: string;
  export default path;
}
declare module "*.onnx" {
  const path: string;
  export default path;
}
declare module "*.css" {
  const path: string;
  export default path;
}
declare module "corpus:third-party-notices" {
  const notices: import("./licenses/notices").Notice[];
  export default notices;
}
