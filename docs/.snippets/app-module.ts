// Prelude "app-module": the host's root module, declared elsewhere.
declare class AppModule {}
