// demo.v1.GreetService: the smallest useful service.
import type { ServiceImpl } from "@connectrpc/connect";
import type { GreetService } from "../gen/demo/v1/greet_pb";

export const greetService: Partial<ServiceImpl<typeof GreetService>> = {
  greet(req) {
    return { greeting: `Hello, ${req.name || "world"}!` };
  },
};
